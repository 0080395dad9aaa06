; Jsonnet tags for hybridmap: function fields (f(x):: ...) are methods, local binds functions or
; values; plain fields are left out (data, not API).
(field function: (fieldname (id) @name.definition.method)) @definition.method
(bind . (id) @name.definition.function (params)) @definition.function
(bind . (id) @name.definition.variable) @definition.variable

(functioncall (fieldaccess last: (id) @name.reference.call))
(functioncall . (id) @name.reference.call)
(fieldaccess . (id) @name.reference.call)
(binary (id) @name.reference.call)
(import (string (string_content) @name.reference.module))
