// Follows a running job: polls its JSON and updates the page, then reloads
// it for the result once the job is done. Without this script the page has
// a Refresh link.
(function () {
  "use strict";
  var el = document.getElementById("job");
  if (!el || el.dataset.done === "true") { return; }
  var id = el.dataset.job;
  function set(name, value) {
    var e = document.getElementById(name);
    if (e) { e.textContent = String(value); }
  }
  function poll() {
    fetch("/job.json?id=" + encodeURIComponent(id), {credentials: "same-origin", cache: "no-store"})
      .then(function (r) { return r.json(); })
      .then(function (s) {
        set("taken", s.taken); set("total", s.total || "?"); set("moved", s.moved);
        set("left", s.left); set("doubtful", s.doubtful); set("seconds", s.seconds);
        var blocked = document.getElementById("blocked");
        if (blocked) { blocked.textContent = s.blocked || ""; blocked.hidden = !s.blocked; }
        if (s.done) { window.location.reload(); } else { setTimeout(poll, 250); }
      })
      .catch(function () { setTimeout(poll, 1000); });
  }
  poll();
})();
