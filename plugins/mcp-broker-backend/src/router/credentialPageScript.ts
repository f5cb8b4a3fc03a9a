/*
 * The script of the credential page (credentialPage.ts), served from the broker's own origin so
 * Backstage's Content-Security-Policy (`script-src 'self'`) needs no exception. It sends the form
 * as JSON with the page's cookie (same origin only) and shows the answer; it never reads a
 * stored value (there is no endpoint that returns one).
 */

/** The script's text (plain ES2017, no build step). */
export const CREDENTIAL_PAGE_SCRIPT = `'use strict';
(function () {
  var form = document.getElementById('store');
  var result = document.getElementById('result');
  if (!form || !result) return;
  var url = form.getAttribute('data-credential');
  function show(text, ok) {
    result.textContent = text;
    result.className = ok ? 'ok' : 'warn';
  }
  function problem(response) {
    return response.json().then(function (body) {
      return (body && body.error && body.error.message) || ('HTTP ' + response.status);
    }, function () { return 'HTTP ' + response.status; });
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var input = document.getElementById('value');
    var body = { value: input.value };
    var elicitation = form.getAttribute('data-elicitation');
    if (elicitation) body.elicitationId = elicitation;
    fetch(url, {
      method: 'PUT',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(function (response) {
      input.value = '';
      if (response.ok) {
        show('Stored. Go back to your MCP client and call the tool again.', true);
        return;
      }
      return problem(response).then(function (message) { show('Not stored: ' + message, false); });
    }, function () { show('Not stored: the broker could not be reached.', false); });
  });
  var remove = document.getElementById('delete');
  if (remove) {
    remove.addEventListener('click', function () {
      fetch(url, { method: 'DELETE', credentials: 'same-origin' }).then(function (response) {
        if (response.ok) { show('Deleted.', true); remove.remove(); return; }
        return problem(response).then(function (message) { show('Not deleted: ' + message, false); });
      });
    });
  }
})();
`;
