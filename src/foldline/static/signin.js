// The sign-in page.
//
// A sign-in link carries its token after "#": it never reaches a server or a log. Move it into
// the form and drop it from the address; sign in at once unless this browser is already signed
// in as someone, in which case the person confirms (a link cannot silently swap sessions).
//
// Any other fragment is a place in a transcript (which the server never sees either): it is kept
// through signing in, so a shared search address still opens at its match.
const form = document.getElementById("signin");
const next = form ? form.elements.namedItem("next") : null;
const found = /(?:^#|&)token=([^&]*)/.exec(location.hash);
if (form && found) {
  history.replaceState(null, "", location.pathname + location.search);
  let token = "";
  try {
    token = decodeURIComponent(found[1]);
  } catch {
    token = "";
  }
  form.elements.namedItem("token").value = token;
  const current = form.querySelector("[data-current]");
  if (current) {
    current.insertAdjacentText("beforeend", " The link you followed holds a token: sign in to use it instead.");
    form.querySelector("button[type=submit]").focus();
  } else if (token) {
    form.requestSubmit();
  }
} else if (next && location.hash.length > 1 && !next.value.includes("#")) {
  next.value += location.hash;
}
