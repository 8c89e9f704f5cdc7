// Loaded by path (`failureConverterPath`) in the worker, the client and the workflow bundle, hence
// plain CommonJS. Failure messages and stack traces go into an encoded payload, so the payload codec
// encrypts them too: a failed attempt's message can quote tool arguments or the user's words.
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
