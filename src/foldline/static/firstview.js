// A transcript's first view: the data the shell holds for it, and laying out only what a screen
// shows before the first paint.

// The first view the shell holds for the agent it was opened on (panel.py's first_view), taken
// once: a later visit to the same agent reads the API, as any other.
export function shellFirstView(agent) {
  const node = document.getElementById("first-view");
  if (!node) return null;
  node.remove();
  try {
    const data = JSON.parse(node.textContent);
    return data && data.agent && data.agent.id === agent && data.page ? data : null;
  } catch {
    return null;
  }
}

// The agent of the first view the shell holds, without taking it (a share link's panel opens on it).
export function firstViewAgent() {
  const node = document.getElementById("first-view");
  try {
    const data = node ? JSON.parse(node.textContent) : null;
    return data && data.agent && typeof data.agent.id === "string" ? data.agent.id : null;
  } catch {
    return null;
  }
}

// A guess at a message's height while it is not laid out; once laid out, its own is kept.
const GUESS = "auto 200px";

function skip(node, on) {
  node.style.contentVisibility = on ? "auto" : "";
  node.style.containIntrinsicSize = on ? GUESS : "";
}

// The newest messages are laid out until they fill the window; the ones above it are left out
// of layout (content-visibility: auto) until afterwards, so the first layout is of one screen,
// not of the whole page. Returns the messages left out, for layAll().
export function layOutScreen(list) {
  const messages = [...list.querySelectorAll(":scope > .msg")];
  for (const node of messages) skip(node, true);
  let height = 0;
  let i = messages.length;
  while (i > 0 && height < window.innerHeight) {
    i -= 1;
    skip(messages[i], false);
    height += messages[i].getBoundingClientRect().height;
  }
  for (const node of messages.slice(i)) skip(node, false);
  return messages.slice(0, i);
}

// Lay out the messages layOutScreen() left out. The browser's scroll anchoring keeps the
// messages on screen where they are while the ones above them take their own heights.
export function layAll(skipped) {
  for (const node of skipped) skip(node, false);
}

// Resolves once what is drawn now has been painted (the next frame, then the task after it); a
// tab in the background draws no frame, so it does not wait for one past a quarter second.
export function afterPaint() {
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 250);
  });
}
