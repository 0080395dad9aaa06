; TypeScript tags for hybridmap (also used for TSX).
(function_declaration name: (identifier) @name.definition.function) @definition.function
(generator_function_declaration name: (identifier) @name.definition.function) @definition.function
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(abstract_class_declaration name: (type_identifier) @name.definition.class) @definition.class
(method_definition name: (property_identifier) @name.definition.method) @definition.method
(abstract_method_signature name: (property_identifier) @name.definition.method) @definition.method
(interface_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(type_alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(internal_module name: (identifier) @name.definition.namespace) @definition.namespace
(program (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant) @definition.constant))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant) @definition.constant)))
(program (variable_declaration (variable_declarator name: (identifier) @name.definition.variable) @definition.variable))

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (member_expression property: (property_identifier) @name.reference.call))
(new_expression constructor: (identifier) @name.reference.class)
(type_annotation (type_identifier) @name.reference.type)
(generic_type name: (type_identifier) @name.reference.type)
(extends_clause value: (identifier) @name.reference.class)
(implements_clause (type_identifier) @name.reference.implementation)
(extends_type_clause type: (type_identifier) @name.reference.class)
(import_specifier name: (identifier) @name.reference.module)
