// Run by `npm install` in a clone (the `prepare` script; never in a project that installs the
// package): on Node 20, the one line about its version. The project's .npmrc keeps npm to errors,
// so the engine warnings of the packages that ask for Node 22 (and run on 20.19+) do not repeat it.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `Node.js ${process.versions.node} is past its end of life: everything here runs on it, but upgrade to Node 22 or 24 (some packages ask for 22; the Lambda functions run on nodejs24.x).`,
  );
}
