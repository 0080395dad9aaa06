; Objective-C tags for hybridmap (.m / .mm; headers belong to C).

; --- definitions ---------------------------------------------------------------

; @interface Foo : Bar ... @end   (categories `@interface Foo (Extra)` too)
(class_interface . (identifier) @name.definition.class) @definition.class

; @implementation Foo ... @end
(class_implementation . (identifier) @name.definition.implementation) @definition.implementation
(class_implementation . (identifier) @name.reference.class)

; @protocol Greeting ... @end
(protocol_declaration . (identifier) @name.definition.interface) @definition.interface

; Method bodies: `- (T)first:(A)a second:(B)b { ... }` -> name is the first selector part.
(method_definition . (method_type)? . (identifier) @name.definition.method) @definition.method

; Method requirements declared in a protocol.
(protocol_declaration
  (method_declaration . (method_type)? . (identifier) @name.definition.method) @definition.method)

; @property (...) NSString *name;
(class_interface
  (property_declaration
    (struct_declaration (struct_declarator [
      (identifier) @name.definition.property
      (pointer_declarator declarator: (identifier) @name.definition.property)
    ]))) @definition.property)

; Plain C functions.
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name.definition.function)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
  ]) @definition.function

(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum
(type_definition
  declarator: [
    (type_identifier) @name.definition.type
    (pointer_declarator declarator: (type_identifier) @name.definition.type)
  ]) @definition.type

[
  (preproc_def name: (identifier) @name.definition.macro)
  (preproc_function_def name: (identifier) @name.definition.macro)
] @definition.macro

; File-level variables and constants (`static NSString *const kX = @"..";`), not locals.
(translation_unit
  (declaration
    declarator: [
      (identifier) @name.definition.variable
      (pointer_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [
        (identifier) @name.definition.variable
        (pointer_declarator declarator: (identifier) @name.definition.variable)
      ])
    ]) @definition.variable)

; --- references ----------------------------------------------------------------

; Superclass and adopted protocols.
(class_interface superclass: (identifier) @name.reference.class)
(class_interface (parameterized_arguments (type_name (type_identifier) @name.reference.implementation)))

; Messages: `[obj first:a second:b]` -> first selector part; `[Foo alloc]` -> class use.
(message_expression receiver: (_) . method: (identifier) @name.reference.call) @reference.call
(message_expression
  receiver: (identifier) @name.reference.class
  (#match? @name.reference.class "^[A-Z]"))

; C calls.
(call_expression function: (identifier) @name.reference.call) @reference.call

; Type uses: declarations, method signatures (not `instancetype`/`id`), casts.
[
  (declaration type: (type_identifier) @name.reference.type)
  (parameter_declaration type: (type_identifier) @name.reference.type)
  (function_definition type: (type_identifier) @name.reference.type)
  (type_descriptor type: (type_identifier) @name.reference.type)
]
(method_type
  (type_name (type_identifier) @name.reference.type)
  (#not-match? @name.reference.type "^(instancetype|id)$"))
