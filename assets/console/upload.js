// #25 knowledge: the upload form with progress. Sends the same multipart form the page posts without
// script, by XHR so the upload's progress shows; then follows the server's answer: the list again after a
// 303, or the page with what is wrong (422) in place of this one. No inline script: the CSP stays strict.
(() => {
  const form = document.getElementById('upload-form');
  const box = document.getElementById('upload-progress-box');
  const bar = document.getElementById('upload-progress');
  const state = document.getElementById('upload-state');
  if (!form || !box || !bar || !state || !window.XMLHttpRequest || !window.FormData) return;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const button = form.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    box.hidden = false;
    const xhr = new XMLHttpRequest();
    xhr.open('POST', form.action);
    xhr.upload.addEventListener('progress', (p) => {
      if (!p.lengthComputable) return;
      const pct = Math.round((p.loaded / p.total) * 100);
      bar.value = pct;
      state.textContent = pct + ' %';
    });
    xhr.upload.addEventListener('load', () => {
      bar.value = 100;
      state.textContent = state.dataset.processing;
    });
    xhr.addEventListener('load', () => {
      if (xhr.status === 200 && xhr.responseURL && xhr.responseURL !== form.action) {
        location.assign(xhr.responseURL);
        return;
      }
      // A page of its own (422 with what is wrong, 403): shown in place of this one.
      const page = new DOMParser().parseFromString(xhr.responseText, 'text/html');
      const main = page.querySelector('main');
      if (main) {
        document.querySelector('main').replaceWith(main);
        document.title = page.title;
        const alert = document.querySelector('[role=alert]');
        if (alert) { alert.tabIndex = -1; alert.focus(); }
      } else {
        location.reload();
      }
    });
    xhr.addEventListener('error', () => form.submit());
    xhr.send(new FormData(form));
  });
})();
