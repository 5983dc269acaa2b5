// Artifacts: large values kept as files beside the notebook (.mcp2repl/artifacts/), so they can
// leave the notebook's output and an agent's context while staying one call away. The serializer
// and the Python side live in the display layer (display/js/artifacts.js, display/artifacts.py).
(function installArtifactApi() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const $ = ns.$; // built-ins captured before any cell ran (intrinsics.js)
  const api = ns.api;

  /**
   * Save a value as an artifact file and get a small handle back.
   * @param {string} name file name, e.g. "results.json" (extension added when missing); nothing
   *   can escape the artifact folder
   * @param {*} value the value (bytes: a Uint8Array/ArrayBuffer; ndjson: an array)
   * @param {{format?: "json"|"text"|"ndjson"|"bytes"}} [options] default: bytes for binary
   *   values, text for strings, json otherwise. A big value (JSON of millions of characters) is
   *   written in pieces, other async code running between them: await the save before changing it.
   *   The file appears whole when the last piece is in, or not at all. A save that would take the
   *   artifact folder past its cap (MCP2REPL_ARTIFACT_MAX_MB / _MAX_FILES) is refused with an
   *   ArtifactError once the kernel's own auto-saved artifacts cannot make room. `path` is relative
   *   to the working folder (or to the artifact folder when that is elsewhere).
   * @returns {Promise<{name: string, kind: "artifact", bytes: number, format: string, readWith: string, path: string, created: string, relPath?: string}>}
   */
  api.saveArtifact = async function saveArtifact(name, value, options = {}) {
    return (await $.pinned(ns.saveArtifact(name, value, { format: options && options.format }))).v; // never auto: the user's to keep
  };

  /**
   * Read an artifact back: JSON and NDJSON as values, text as a string, bytes as a Uint8Array.
   * @param {string|{name: string}} handleOrName
   * @returns {Promise<*>}
   */
  api.readArtifact = async function readArtifact(handleOrName) {
    return (await $.pinned(ns.readArtifact(handleOrName && typeof handleOrName === "object" ? handleOrName.name : handleOrName))).v;
  };

  /**
   * Every artifact of this notebook's folder, newest first.
   * @returns {Promise<{name: string, kind: "artifact", bytes: number, format: string, readWith: string, path: string, created: string, relPath?: string}[]>}
   */
  api.artifacts = () => ns.call("artifacts.list", {});
})();
