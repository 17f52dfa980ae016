"""How many tool calls one screen shows: the page scripts the density test and the screenshot
script (``screenshots.py``, run as a plain script) both evaluate.

Only tool rows whose summary lies wholly below the sticky bars (the top bar and the find bar
under it) and inside the window count.
"""

# The tool rows in view now.
IN_VIEW = """() => {
  const top = Math.max(...[...document.querySelectorAll('.bar, .agent-head')]
    .map((b) => b.getBoundingClientRect().bottom));
  return [...document.querySelectorAll('.messages details.tool > summary')]
    .map((s) => s.getBoundingClientRect())
    .filter((r) => r.height > 0 && r.top >= top && r.bottom <= innerHeight).length;
}"""

# Scroll to the densest screen, the tool row from which the most rows fit below the sticky bars,
# and say how many fit.
DENSEST = """() => {
  const sticky = [...document.querySelectorAll('.bar, .agent-head')]
    .reduce((h, b) => h + b.getBoundingClientRect().height, 0);
  const rows = [...document.querySelectorAll('.messages details.tool > summary')]
    .map((s) => s.getBoundingClientRect()).filter((r) => r.height > 0)
    .map((r) => [r.top + scrollY, r.bottom + scrollY]);
  let best = 0, at = 0;
  for (let i = 0; i < rows.length; i += 1) {
    let n = 0;
    while (i + n < rows.length && rows[i + n][1] <= rows[i][0] + innerHeight - sticky) n += 1;
    if (n > best) [best, at] = [n, rows[i][0]];
  }
  scrollTo(0, at - sticky - 1);
  return best;
}"""
