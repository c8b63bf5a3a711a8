/**
 * `npm run devnet`. Until the devnet chain lands this starts the bare node with its
 * configuration (issue 2 allows it); the chain and the scripted scenario replace it.
 */
await import('../main.js');
