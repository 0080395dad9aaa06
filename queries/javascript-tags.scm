; JavaScript tags for hybridmap.
(function_declaration name: (identifier) @name.definition.function) @definition.function
(generator_function_declaration name: (identifier) @name.definition.function) @definition.function
(class_declaration name: (identifier) @name.definition.class) @definition.class
(method_definition name: (property_identifier) @name.definition.method) @definition.method
(program (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant) @definition.constant))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant) @definition.constant)))
(program (variable_declaration (variable_declarator name: (identifier) @name.definition.variable) @definition.variable))
(assignment_expression left: (member_expression object: (identifier) @_obj property: (property_identifier) @name.definition.function) right: [(function_expression) (arrow_function)] (#eq? @_obj "exports")) @definition.function

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (member_expression property: (property_identifier) @name.reference.call))
(new_expression constructor: (identifier) @name.reference.class)
(class_heritage (identifier) @name.reference.class)
(import_specifier name: (identifier) @name.reference.module)
