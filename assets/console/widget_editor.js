// The widget editor: a copy button for the embed code. Without this script the code is still there to
// select and copy by hand; the button is shown only when the script runs.
(() => {
  'use strict';
  const button = document.getElementById('copy-embed');
  const code = document.getElementById('embed');
  const status = document.getElementById('copy-status');
  if (!button || !code || !status) return;
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  };
  button.hidden = false;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      status.textContent = button.dataset.done;
    } catch {
      // No clipboard (an insecure context, or permission refused): select the code for Ctrl+C instead.
      select();
      status.textContent = button.dataset.select;
    }
  });
})();
