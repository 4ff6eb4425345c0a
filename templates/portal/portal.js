// The customer portal's buttons that need a script: copy a license key, print a receipt.
// They are hidden until this runs, so a page without scripts shows no dead button.
// Its words come in the page's language from the hidden #i18n element's data attributes.
(function () {
  "use strict";

  function say(name, english) {
    var el = document.getElementById("i18n");
    return (el && el.getAttribute("data-" + name)) || english;
  }

  function flash(button, label) {
    var original = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", original);
    button.textContent = label;
    window.setTimeout(function () { button.textContent = original; }, 2500);
  }

  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function copy(button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target) { return; }
    var text = target.textContent.trim();
    var fallback = function () {
      selectText(target);
      var copied = false;
      try { copied = document.execCommand("copy"); } catch (e) { copied = false; }
      flash(button, copied ? say("copied", "Copied") : say("selected", "Selected: press Ctrl+C"));
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { flash(button, say("copied", "Copied")); }, fallback);
    } else {
      fallback();
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (b) {
      b.hidden = false;
      b.setAttribute("aria-live", "polite");
      b.addEventListener("click", function () { copy(b); });
    });
    Array.prototype.forEach.call(document.querySelectorAll("button[data-print]"), function (b) {
      b.hidden = false;
      b.addEventListener("click", function () { window.print(); });
    });
  });
}());
