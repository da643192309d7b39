// skills-mcp web interface: the little script there is. Every page works
// without it; it only saves keystrokes.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // A filter submits its form when changed.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (el) {
    el.addEventListener("change", function () { if (el.form) el.form.submit(); });
  });
  // Copy buttons: the text of the element data-copy names, or the value
  // of data-copy-text. Hidden without script, which they need.
  document.querySelectorAll("button[data-copy], button[data-copy-text]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var text = b.getAttribute("data-copy-text");
      if (text === null) {
        var src = document.getElementById(b.getAttribute("data-copy"));
        text = src ? src.textContent : null;
      }
      if (text === null || !navigator.clipboard) return;
      navigator.clipboard.writeText(text).then(function () {
        b.textContent = "Copied";
      });
    });
  });
  // A runtime choice with data-image fills the image field that still
  // holds a suggestion (or nothing) with its own.
  var image = document.querySelector("input[data-suggested]");
  if (image) {
    document.querySelectorAll("input[data-image]").forEach(function (r) {
      r.addEventListener("change", function () {
        if (!r.checked) return;
        if (image.value === "" || image.value === image.getAttribute("data-suggested")) {
          image.value = r.getAttribute("data-image");
          image.setAttribute("data-suggested", image.value);
        }
      });
    });
  }
  // A page shown while the site is not ready asks again, and reloads once
  // the answer is no longer 503.
  var wait = document.querySelector("[data-reload-when-ready]");
  if (wait) {
    var every = 1000 * (parseInt(wait.getAttribute("data-reload-when-ready"), 10) || 1);
    var ask = function () {
      fetch(location.href, { method: "HEAD", credentials: "same-origin", cache: "no-store" })
        .then(function (r) { if (r.status !== 503) location.reload(); else setTimeout(ask, every); })
        .catch(function () { setTimeout(ask, every); });
    };
    setTimeout(ask, every);
  }
  // "/" moves to the search field, as on most sites.
  var q = document.getElementById("q");
  if (q) {
    document.addEventListener("keydown", function (e) {
      var t = e.target && e.target.tagName;
      if (e.key === "/" && t !== "INPUT" && t !== "TEXTAREA" && t !== "SELECT") {
        e.preventDefault();
        q.focus();
      }
    });
  }
});
