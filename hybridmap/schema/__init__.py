"""JSON Schemas of the CLI's JSON output (``map.schema.json``, ``servers.schema.json``), shipped as
package data: ``importlib.resources.files("hybridmap.schema") / "map.schema.json"``."""
