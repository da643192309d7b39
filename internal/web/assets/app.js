// skills-mcp web interface: the little script there is. Every page works
// without it; it only saves keystrokes.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // A filter submits its form when changed.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (el) {
    el.addEventListener("change", function () { if (el.form) el.form.submit(); });
  });
  // Buttons that copy the text of the element their data-copy names.
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var src = document.getElementById(b.getAttribute("data-copy"));
      if (!src || !navigator.clipboard) return;
      navigator.clipboard.writeText(src.textContent).then(function () {
        b.textContent = "Copied";
      });
    });
  });
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
