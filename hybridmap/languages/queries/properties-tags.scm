; Java .properties tags for hybridmap: each key is a definition (what code looks up by name);
; ${key} substitutions are references to it.
(property (key) @name.definition.property) @definition.property
(substitution (key) @name.reference.call)
