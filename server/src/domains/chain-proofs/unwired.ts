/**
 * Stand-ins for the receipt chain and the artifact signer until the real ones are given to buildContext:
 * every call is 503, so nothing is signed or proved from a chain the service cannot read.
 */
import { unavailable } from '../../http/errors.js';
import type { ReceiptChainSource } from '../receipts/chain-source.js';
import type { ArtifactSigner } from '../signing/signer.js';

const off = (what: string) => async (): Promise<never> => {
  throw unavailable(`${what} is not configured on this server`, 60);
};

export const unwiredChainSource: ReceiptChainSource = { size: off('the receipt chain'), entries: off('the receipt chain'), verify: off('the receipt chain') };
export const unwiredSigner: ArtifactSigner = { currentKeyId: off('artifact signing'), sign: off('artifact signing') };
