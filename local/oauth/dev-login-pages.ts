/**
 * The pages of the development authorization server: sign in with any user name (no
 * password), then allow the client its scopes. Each says plainly that it is for development.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)} · async-mcp development sign-in</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
.dev{background:#fff3cd;border:2px solid #d39e00;padding:.75rem;border-radius:.4rem;font-weight:600}
input[type=text]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{padding:.5rem 1.25rem;font-size:1rem;margin-top:1rem;margin-right:.5rem}
code{background:#eee;padding:0 .2rem}
</style></head><body>
<p class="dev" role="alert">Development only: this server signs in anyone, with any user name and no password. Never expose it.</p>
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}

/** The sign-in step: one user name field. */
export function renderLoginPage(uid: string, clientName: string, problem?: string): string {
  return page(
    'Sign in',
    `<p><strong>${escapeHtml(clientName)}</strong> wants to use async-mcp as you.</p>
${problem ? `<p role="status" style="color:#a00">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
<label for="username">User name (any, e.g. <code>alice</code> or <code>bob</code>)</label>
<input type="text" id="username" name="username" required autofocus pattern="[\\w.@\\-]{1,64}">
<button type="submit">Sign in</button>
</form>`,
  );
}

/** The consent step: what the client asked for, per resource. */
export function renderConsentPage(uid: string, clientName: string, user: string, items: Array<{ resource?: string; scopes: string[] }>): string {
  const list = items
    .map(
      (item) =>
        `<li>${item.resource ? `<code>${escapeHtml(item.resource)}</code>: ` : 'Your account: '}${item.scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(' ')}</li>`,
    )
    .join('\n');
  return page(
    'Allow access',
    `<p>Signed in as <strong>${escapeHtml(user)}</strong>.</p>
<p><strong>${escapeHtml(clientName)}</strong> asks for:</p>
<ul>${list || '<li>nothing new</li>'}</ul>
<form method="post" action="/interaction/${escapeHtml(uid)}/confirm"><button type="submit" id="allow">Allow</button></form>
<form method="post" action="/interaction/${escapeHtml(uid)}/abort"><button type="submit" id="deny">Deny</button></form>`,
  );
}

/** An OAuth error shown to the person at the browser (the client gets its own redirect). */
export function renderErrorPage(error: string, description: string): string {
  return page('Sign-in failed', `<p><code>${escapeHtml(error)}</code></p><p>${escapeHtml(description)}</p>`);
}
