// skills-mcp hub administration: long work updates in place. An element
// with data-poll="URL" is refreshed from that JSON route every second
// while its state is "running"; without script the page refreshes itself.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-poll]").forEach(function (box) {
    var url = box.getAttribute("data-poll");
    var state = box.querySelector("#task-state");
    var time = box.querySelector("#task-time");
    var log = box.querySelector("#task-log");
    var next = box.querySelector("#task-next");
    var link = box.querySelector("#task-result");
    function show(t) {
      state.textContent = t.state;
      time.textContent = t.seconds + " s";
      log.textContent = (t.lines || []).join("\n") + "\n";
      if (t.result) link.setAttribute("href", t.result);
      next.hidden = t.state !== "done";
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
