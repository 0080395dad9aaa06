; Apex (Salesforce) tags for hybridmap
(class_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(trigger_declaration name: (identifier) @name.definition.class) @definition.class
(method_declaration name: (identifier) @name.definition.method) @definition.method
(constructor_declaration name: (identifier) @name.definition.constructor) @definition.constructor
(field_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.constant)
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant
(field_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.field)
  (#not-match? @name.definition.field "^[A-Z][A-Z0-9_]*$")) @definition.field

(method_invocation name: (identifier) @name.reference.call)
(object_creation_expression type: (type_identifier) @name.reference.class)
(object_creation_expression type: (generic_type (type_identifier) @name.reference.class))
(type_identifier) @name.reference.type
(interfaces (type_list (type_identifier) @name.reference.implementation))
(superclass (type_identifier) @name.reference.class)
(storage_identifier (identifier) @name.reference.type)
