// The dashboard's file upload (issue 50), through the API as Polar's dashboard does: the
// plan of parts (5 MiB each, at most 10 000, each with its SHA-256), POST /v1/files/ with
// the dashboard's session, each part PUT to its signed URL from Blob.slice, then
// POST /v1/files/{id}/uploaded with the ETags. The page reloads when the file is in.
(function () {
  "use strict";
  var form = document.getElementById("upload");
  if (!form) { return; }
  var input = document.getElementById("file-input");
  var version = document.getElementById("file-version");
  var status = document.getElementById("upload-status");
  var progress = document.getElementById("upload-progress");
  var button = document.getElementById("upload-button");
  var MIB5 = 5 * 1024 * 1024;

  function say(text) { status.textContent = text; }

  function b64(buffer) {
    var bytes = new Uint8Array(buffer), s = "";
    for (var i = 0; i < bytes.length; i++) { s += String.fromCharCode(bytes[i]); }
    return btoa(s);
  }

  function sha256(blob) {
    if (!(window.crypto && window.crypto.subtle)) { return Promise.resolve(null); }
    return blob.arrayBuffer().then(function (b) { return window.crypto.subtle.digest("SHA-256", b); })
      .then(b64);
  }

  function problem(body, status) {
    if (body && Array.isArray(body.detail)) {
      return body.detail.map(function (d) { return d.msg; }).join("; ");
    }
    if (body && body.detail) { return String(body.detail); }
    return "HTTP " + status;
  }

  function api(method, path, body) {
    return fetch(path, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return null; }).then(function (j) {
        if (!r.ok) { throw new Error(problem(j, r.status)); }
        return j;
      });
    });
  }

  async function upload(file) {
    var chunk = Math.max(MIB5, Math.ceil(file.size / 10000));
    var parts = [];
    var start = 0, number = 1;
    do {
      var end = Math.min(file.size, start + chunk);
      say("Checking part " + number + "…");
      parts.push({ number: number, chunk_start: start, chunk_end: end,
                   checksum_sha256_base64: await sha256(file.slice(start, end)) });
      start = end;
      number += 1;
    } while (start < file.size);
    var created = await api("POST", "/v1/files/", {
      organization_id: form.dataset.org, service: "downloadable", name: file.name,
      mime_type: file.type || "application/octet-stream", size: file.size,
      version: version.value.trim() || null, upload: { parts: parts }
    });
    progress.hidden = false;
    var done = [];
    for (var i = 0; i < created.upload.parts.length; i++) {
      var p = created.upload.parts[i];
      say("Uploading part " + p.number + " of " + created.upload.parts.length + "…");
      var r = await fetch(p.url, { method: "PUT", headers: p.headers,
                                   body: file.slice(p.chunk_start, p.chunk_end) });
      if (!r.ok) {
        var j = await r.json().catch(function () { return null; });
        throw new Error(problem(j, r.status));
      }
      done.push({ number: p.number, checksum_etag: r.headers.get("ETag"),
                  checksum_sha256_base64: p.checksum_sha256_base64 });
      progress.value = Math.round(100 * (i + 1) / created.upload.parts.length);
    }
    say("Finishing…");
    await api("POST", "/v1/files/" + created.id + "/uploaded",
              { id: created.upload.id, path: created.upload.path, parts: done });
    return created;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = input.files && input.files[0];
    if (!file) { say("Choose a file first."); return; }
    button.disabled = true;
    upload(file).then(function (f) {
      say("Uploaded " + f.name + ".");
      window.location.reload();
    }).catch(function (e) {
      say("The upload failed: " + e.message);
      status.className = "error";
      button.disabled = false;
    });
  });
}());
