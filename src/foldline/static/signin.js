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
const LINK_HOLDS = " The link you followed holds a token: sign in to use it instead.";

// Take a link's token (or keep a place in a transcript) from the address's fragment.
function follow() {
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
      if (!current.textContent.includes(LINK_HOLDS)) current.insertAdjacentText("beforeend", LINK_HOLDS);
      form.querySelector("button[type=submit]").focus();
    } else if (token) {
      form.requestSubmit();
    }
  } else if (next && location.hash.length > 1 && !next.value.includes("#")) {
    next.value += location.hash;
  }
}

follow();
// A link opened on this very page (signing out lands here) changes only the fragment: the
// browser does not load the page again, so the token is taken when the fragment changes.
window.addEventListener("hashchange", follow);
