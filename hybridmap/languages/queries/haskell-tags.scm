; Haskell tags for hybridmap.
(declarations (function name: (variable) @name.definition.function) @definition.function)
(declarations (bind name: (variable) @name.definition.constant) @definition.constant)
(data_type name: (name) @name.definition.type) @definition.type
(newtype name: (name) @name.definition.type) @definition.type
(class name: (name) @name.definition.interface) @definition.interface
(class_declarations (signature name: (variable) @name.definition.method) @definition.method)

(apply function: (variable) @name.reference.call)
(apply function: (qualified (variable) @name.reference.call))
(signature type: (name) @name.reference.type)
(function parameter: (name) @name.reference.type)
(function result: (name) @name.reference.type)
(import_name variable: (variable) @name.reference.module)
