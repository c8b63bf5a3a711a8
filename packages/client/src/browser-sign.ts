/**
 * The SDK in a browser, signing (`npm run bundle:browser`, docs/CLI.md "The SDK in a
 * browser"): a call envelope built and signed in the page, its anchoring transaction
 * built from the page's wallet, and the body to post. Reading is packages/client/src/browser.ts.
 */
export { buildCall, randomCallId, callSubmission, buildCallAnchor } from './sdk.js';
export type { BuildCallParams, BuiltCall } from './sdk.js';
export { walletFromSecret, parseSecret, networkOf } from './wallet.js';
export type { Wallet, WalletKind } from './wallet.js';
export { buildAnchorTx } from './anchor.js';
export type { AnchorTx, Utxo, Payment } from './anchor.js';
export { encodeEnvelope, signEnvelope } from '@svc-node/protocol/envelope';
export { xOnlyPublicKey } from '@svc-node/protocol/schnorr';
