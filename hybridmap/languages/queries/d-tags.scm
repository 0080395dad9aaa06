; D tags for hybridmap

(module_declaration (module_fqn) @name.definition.module) @definition.module

(class_declaration . (class) . (identifier) @name.definition.class) @definition.class
(struct_declaration . (struct) . (identifier) @name.definition.struct) @definition.struct
(union_declaration . (union) . (identifier) @name.definition.struct) @definition.struct
(interface_declaration . (interface) . (identifier) @name.definition.interface) @definition.interface
(enum_declaration . (enum) . (identifier) @name.definition.enum) @definition.enum
(template_declaration . (template) . (identifier) @name.definition.type) @definition.type
(alias_declaration (alias_initializer . (identifier) @name.definition.type)) @definition.type

; functions: free (module level) vs. members of an aggregate
(source_file
  (function_declaration (identifier) @name.definition.function) @definition.function)
(module_def
  (function_declaration (identifier) @name.definition.function) @definition.function)
(aggregate_body
  (function_declaration (identifier) @name.definition.method) @definition.method)
(aggregate_body
  (constructor (this) @name.definition.constructor) @definition.constructor)

; module-level constants and variables
(manifest_constant (manifest_declarator . (identifier) @name.definition.constant)) @definition.constant
(source_file
  (variable_declaration (declarator . (identifier) @name.definition.variable)) @definition.variable)
(module_def
  (variable_declaration (declarator . (identifier) @name.definition.variable)) @definition.variable)
(aggregate_body
  (variable_declaration (declarator . (identifier) @name.definition.field)) @definition.field)

; references
(import_declaration (imported (module_fqn) @name.reference.module)) @reference.module

(call_expression . (identifier) @name.reference.call) @reference.call
(call_expression . (type (identifier) @name.reference.call .)) @reference.call

(new_expression (type . (identifier) @name.reference.class)) @reference.class
(base_class . (identifier) @name.reference.class) @reference.class

(parameter (type . (identifier) @name.reference.type)) @reference.type
(variable_declaration (type . (identifier) @name.reference.type)) @reference.type
(function_declaration (type . (identifier) @name.reference.type)) @reference.type
