// The sign-in page: a place in a transcript (the address's fragment, which the server never
// sees) is kept through signing in, so a shared search address still opens at its match.

const next = document.querySelector("input[name=next]");
if (next && location.hash.length > 1 && !next.value.includes("#")) next.value += location.hash;
