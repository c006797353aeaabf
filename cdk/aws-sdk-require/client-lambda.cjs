// Stands in for @aws-sdk/client-lambda in the Lambda bundles (cdk/lambda-bundling.ts): the runtime's
// copy is loaded with require, because an ESM import of CommonJS makes Node lex every module
// it re-exports, which doubles the SDK's share of a cold start. The name is a variable so
// that esbuild leaves this require to the runtime instead of aliasing it back here.
const name = '@aws-sdk/client-lambda';
module.exports = require(name);
