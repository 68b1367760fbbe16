/** Headers of an answer that carries a secret (an API key, a client secret, a token, a webhook secret): no cache on the way may keep it. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
