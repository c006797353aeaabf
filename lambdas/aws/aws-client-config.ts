/**
 * The configuration every deployed AWS SDK client is built with. `cacheMiddleware` resolves
 * each command's middleware stack once per client instead of on every call: a status poll
 * is one GetItem, and resolving the stack was a good part of its CPU time. Middleware must
 * then be added before a client's first call (the call counter and the local size limits are).
 */
export const AWS_CLIENT_CONFIG = { cacheMiddleware: true } as const;
