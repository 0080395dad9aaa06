; Imports of ECMAScript modules, shared by javascript-tags.scm, typescript-tags.scm and tsx-tags.scm
; (`; inherits: ecmascript_imports`): a fragment, the query of no language of its own.
; Where an imported name comes from: the name as the file uses it (its alias, if any) and the
; module specifier (`./x`); re-exports `export { a } from './x'` too, and `export * from './x'` as
; the name `*` (hybridmap.pipeline.import_targets).
(import_statement
  (import_clause (named_imports (import_specifier name: (identifier) @import.name !alias)))
  source: (string (string_fragment) @import.module))
(import_statement
  (import_clause (named_imports (import_specifier alias: (identifier) @import.name)))
  source: (string (string_fragment) @import.module))
(import_statement
  (import_clause (identifier) @import.name)
  source: (string (string_fragment) @import.module))
(export_statement
  (export_clause (export_specifier name: (identifier) @import.name !alias))
  source: (string (string_fragment) @import.module))
(export_statement
  (export_clause (export_specifier alias: (identifier) @import.name))
  source: (string (string_fragment) @import.module))
(export_statement "*" @import.star . source: (string (string_fragment) @import.module))
