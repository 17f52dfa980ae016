// Numbers, sizes, spans and moments as the panel writes them. None uses Intl: a page's first Intl
// formatter costs 20-40 ms of loading locale data, on the first view's path.

// 1234567 -> "1,234,567", as Intl.NumberFormat("en") writes a count.
export function formatCount(n) {
  if (!Number.isSafeInteger(n)) return String(n);
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function formatBytes(n) {
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KB";
  return (n / 1024 / 1024).toFixed(1) + " MB";
}

// 850 -> "850", 12345 -> "12k", 2500000 -> "2.5M".
export function formatTokens(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1000).toFixed(n < 10000 ? 1 : 0) + "k";
  return (n / 1e6).toFixed(1) + "M";
}

// A span of time in milliseconds, short: "850 ms", "4.2 s", "5 s", "42 s", "3m 05s", "2h 10m", "3 d".
export function duration(ms) {
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 9950) return (ms / 1000).toFixed(1).replace(/\.0$/, "") + " s";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return Math.floor(h / 24) + " d";
}

// How long ago a moment (milliseconds, or a stamp Date.parse reads) was: "just now", "5 min ago",
// "3 h ago", "2 d ago", else its date.
export function relativeTime(at) {
  const then = typeof at === "number" ? at : Date.parse(at);
  if (Number.isNaN(then)) return "";
  const s = Math.max(0, (Date.now() - then) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  if (s < 86400 * 30) return Math.floor(s / 86400) + " d ago";
  return new Date(then).toISOString().slice(0, 10);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n) => String(n).padStart(2, "0");

// "Jan 2, 2026, 3:04:05 PM" in local time, as Intl.DateTimeFormat("en", medium date and time) writes it.
export function absoluteTime(at) {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "";
  const hour = d.getHours() % 12 || 12;
  const time = `${hour}:${two(d.getMinutes())}:${two(d.getSeconds())} ${d.getHours() < 12 ? "AM" : "PM"}`;
  return `${MONTHS[d.getMonth()]} ${d.getDate()}, ${d.getFullYear()}, ${time}`;
}

// The time of day of a moment in the reader's time zone, "3:04 PM"; with its date before it
// ("Jan 7, 3:04 PM", and the year when it is not this one) unless it falls on the day of `after`.
export function clockTime(at, after = null) {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "";
  const time = `${d.getHours() % 12 || 12}:${two(d.getMinutes())} ${d.getHours() < 12 ? "AM" : "PM"}`;
  const before = after === null ? null : new Date(after);
  if (before && before.toDateString() === d.toDateString()) return time;
  const year = d.getFullYear() === new Date().getFullYear() ? "" : `, ${d.getFullYear()}`;
  return `${MONTHS[d.getMonth()]} ${d.getDate()}${year}, ${time}`;
}
