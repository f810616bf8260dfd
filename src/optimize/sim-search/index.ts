/**
 * The simulated search and its residual correction: the physics model searches the space for a
 * deployment (search.ts), measured runs correct what it simulated (residual.ts), and a study follows
 * both until its surrogate can be trained (guide.ts).
 */
export * from './search.js';
export * from './residual.js';
export * from './guide.js';
