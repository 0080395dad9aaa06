; PureScript tags for hybridmap. A top-level binding with patterns is a function, without a constant;
; bindings inside an instance are its methods.
(purescript (function name: (variable) @name.definition.function patterns: (patterns)) @definition.function)
(purescript (function name: (variable) @name.definition.constant !patterns) @definition.constant)
(purescript (foreign_import name: (variable) @name.definition.function) @definition.function)
(class_instance (function name: (variable) @name.definition.method) @definition.method)
(class_body (signature name: (variable) @name.definition.method) @definition.method)
(class_declaration (class_head (class_name (type) @name.definition.interface))) @definition.interface
(class_instance (instance_name) @name.definition.implementation) @definition.implementation
(type_alias name: (type) @name.definition.type) @definition.type
(newtype name: (type) @name.definition.type) @definition.type
(data name: (type) @name.definition.enum) @definition.enum
(purescript name: (qualified_module) @name.definition.module) @definition.module

(exp_name (variable) @name.reference.call)
(exp_name (qualified_variable (variable) @name.reference.call))
(exp_name (constructor) @name.reference.class)
(type_name (type) @name.reference.type)
(instance_head (class_name (type) @name.reference.implementation))
(import module: (qualified_module) @name.reference.module)
(import_item (var_import (variable) @name.reference.call))
