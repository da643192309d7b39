// skills-hub console: long work updates in place. An element with
// data-poll="URL" is refreshed from that JSON route every second while its
// state is "running" ({state, seconds, lines, result}); without script
// the page refreshes itself.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-poll]").forEach(function (box) {
    var url = box.getAttribute("data-poll");
    function part(name) { return box.querySelector("[data-part=" + name + "]"); }
    var state = part("state"), time = part("time"), log = part("log"), next = part("next"), link = part("result");
    function show(t) {
      state.textContent = t.state;
      if (time) time.textContent = t.seconds + " s";
      if (log) log.textContent = (t.lines || []).join("\n") + "\n";
      if (link && t.result) link.setAttribute("href", t.result);
      if (next) next.hidden = t.state !== "done";
      box.setAttribute("data-state", t.state);
    }
    function poll() {
      fetch(url, { credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
        .then(function (t) {
          show(t);
          if (t.state === "running") setTimeout(poll, 1000);
        })
        .catch(function () { setTimeout(poll, 3000); });
    }
    if (state.textContent === "running") setTimeout(poll, 500);
    else box.setAttribute("data-state", state.textContent);
  });
});
