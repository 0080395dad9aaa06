; OCaml tags for hybridmap. A let with parameters is a function, any other let a value
; (the function pattern comes first: one definition node keeps its first kind).
(value_definition (let_binding pattern: (value_name) @name.definition.function (parameter))) @definition.function
(value_definition (let_binding pattern: (value_name) @name.definition.variable)) @definition.variable
(module_definition (module_binding (module_name) @name.definition.module)) @definition.module
(type_definition (type_binding name: (type_constructor) @name.definition.type)) @definition.type
(class_definition (class_binding name: (class_name) @name.definition.class)) @definition.class

(application_expression function: (value_path (value_name) @name.reference.call))
(value_path (module_path (module_name) @name.reference.module))
(type_constructor_path (type_constructor) @name.reference.type)
