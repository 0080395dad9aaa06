; Fortran tags for hybridmap

(module
  (module_statement (name) @name.definition.module)) @definition.module

(submodule
  (submodule_statement (name) @name.definition.module)) @definition.module

(program
  (program_statement (name) @name.definition.module)) @definition.module

(derived_type_definition
  (derived_type_statement (type_name) @name.definition.struct)) @definition.struct

(interface
  (interface_statement (name) @name.definition.interface)) @definition.interface

(function
  (function_statement name: (name) @name.definition.function)) @definition.function

(subroutine
  (subroutine_statement name: (name) @name.definition.function)) @definition.function

; type-bound procedures:  procedure :: norm => point_norm  /  procedure :: scale
(derived_type_procedures
  (procedure_statement
    declarator: (binding (binding_name (identifier) @name.definition.method))) @definition.method)

(derived_type_procedures
  (procedure_statement
    declarator: (method_name) @name.definition.method) @definition.method)

; module-level parameters and variables
(module
  (variable_declaration
    (type_qualifier) @_q
    declarator: (init_declarator left: (identifier) @name.definition.constant)
    (#match? @_q "(?i)^parameter$")) @definition.constant)

(module
  (variable_declaration
    declarator: [
      (identifier) @name.definition.variable
      (init_declarator left: (identifier) @name.definition.variable)
    ]) @definition.variable
  (#not-match? @definition.variable "(?i),\\s*parameter"))

; references
(use_statement (module_name) @name.reference.module) @reference.module

(subroutine_call
  subroutine: [
    (identifier) @name.reference.call
    (derived_type_member_expression (type_member) @name.reference.call)
  ]) @reference.call

(call_expression . (identifier) @name.reference.call) @reference.call

(call_expression
  . (derived_type_member_expression (type_member) @name.reference.call)) @reference.call

(derived_type (type_name) @name.reference.type) @reference.type

(base_type_specifier (identifier) @name.reference.class) @reference.class
