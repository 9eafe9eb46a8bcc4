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

// Auto-refresh of a page that offers it (an #auto-refresh checkbox, shown
// only with this script): it reloads every data-seconds seconds while on,
// never while a form on the page is being filled in (a field focused or
// changed) nor while the tab is hidden. On or off is remembered per page.
(function () {
  "use strict";
  var box = document.getElementById("auto-refresh");
  if (!box) { return; }
  var seconds = Number(box.dataset.seconds) || 10;
  var key = "acemq-console-auto-refresh:" + window.location.pathname;
  var note = document.getElementById("refresh-note");
  box.parentElement.hidden = false;
  box.checked = window.localStorage.getItem(key) !== "off";
  box.addEventListener("change", function () {
    window.localStorage.setItem(key, box.checked ? "on" : "off");
    say("");
  });
  function say(text) { if (note) { note.textContent = text; } }
  // filling says whether a form field (other than the switch) is focused or
  // holds something other than what the page came with.
  function filling() {
    var active = document.activeElement;
    if (active && active !== box && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) { return true; }
    var fields = document.querySelectorAll("input, textarea, select");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f === box || f.type === "hidden") { continue; }
      if (f.type === "checkbox" || f.type === "radio") {
        if (f.checked !== f.defaultChecked) { return true; }
      } else if (f.tagName === "SELECT") {
        for (var j = 0; j < f.options.length; j++) {
          if (f.options[j].selected !== f.options[j].defaultSelected) { return true; }
        }
      } else if (f.value !== f.defaultValue) {
        return true;
      }
    }
    return false;
  }
  setInterval(function () {
    if (!box.checked || document.hidden) { return; }
    if (filling()) { say("(paused: a form is being filled in)"); return; }
    window.location.reload();
  }, seconds * 1000);
})();
