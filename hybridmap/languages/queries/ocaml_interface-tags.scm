; OCaml interface (.mli) tags for hybridmap. A val of function type is a function, any other a value
; (the function pattern comes first: one definition node keeps its first kind).
(value_specification (value_name) @name.definition.function type: (function_type)) @definition.function
(value_specification (value_name) @name.definition.variable) @definition.variable
(external (value_name) @name.definition.function) @definition.function
(type_definition (type_binding name: (type_constructor) @name.definition.type)) @definition.type
(exception_definition (constructor_declaration (constructor_name) @name.definition.class)) @definition.class
(module_definition (module_binding (module_name) @name.definition.module)) @definition.module
(module_type_definition (module_type_name) @name.definition.interface) @definition.interface
(class_definition (class_binding (class_name) @name.definition.class)) @definition.class
(class_type_definition (class_type_binding (class_type_name) @name.definition.class)) @definition.class
(method_specification (method_name) @name.definition.method) @definition.method

(type_constructor_path (type_constructor) @name.reference.type)
(extended_module_path (module_name) @name.reference.module)
(module_type_path (module_type_name) @name.reference.type)
