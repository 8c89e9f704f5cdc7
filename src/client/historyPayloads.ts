/**
 * Decoding payloads read from a workflow's history (activity inputs, Update arguments, results) with
 * the client's converter: the one place the client reaches into the SDK's internals for it, as the
 * SDK exports no public decoder of history payloads.
 */
export { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
