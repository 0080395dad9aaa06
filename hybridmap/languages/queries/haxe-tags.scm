; Haxe tags for hybridmap (the 0.13 grammar parses classes, interfaces, functions and vars;
; enum and typedef declarations come out as errors, so they are not listed).
(class_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(class_declaration body: (block (function_declaration name: (identifier) @name.definition.method) @definition.method))
(interface_declaration body: (block (function_declaration name: (identifier) @name.definition.method) @definition.method))
(module (function_declaration name: (identifier) @name.definition.function) @definition.function)
(class_declaration body: (block (variable_declaration name: (identifier) @name.definition.constant) @definition.constant)
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$"))
(class_declaration body: (block (variable_declaration name: (identifier) @name.definition.field) @definition.field)
  (#not-match? @name.definition.field "^[A-Z][A-Z0-9_]*$"))

(call_expression object: (identifier) @name.reference.call)
(call_expression object: (member_expression member: (identifier) @name.reference.call))
(call_expression constructor: (type_name) @name.reference.class)
(class_declaration interface_name: (type_name) @name.reference.implementation)
(class_declaration super_class_name: (type_name) @name.reference.class)
(type type_name: (identifier) @name.reference.type)
(import_statement (type_name) @name.reference.module)
