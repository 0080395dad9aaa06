; Python tags for hybridmap.
(module (class_definition name: (identifier) @name.definition.class) @definition.class)
(module (decorated_definition definition: (class_definition name: (identifier) @name.definition.class) @definition.class))
(block (class_definition name: (identifier) @name.definition.class) @definition.class)

(module (function_definition name: (identifier) @name.definition.function) @definition.function)
(module (decorated_definition definition: (function_definition name: (identifier) @name.definition.function) @definition.function))

(class_definition body: (block (function_definition name: (identifier) @name.definition.method) @definition.method))
(class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)))

(module (assignment left: (identifier) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant "^_*[A-Z][A-Z0-9_]*$"))
(module (assignment left: (identifier) @name.definition.variable) @definition.variable
  (#not-match? @name.definition.variable "^_*[A-Z][A-Z0-9_]*$"))

(call function: (identifier) @name.reference.call)
(call function: (attribute attribute: (identifier) @name.reference.call))
(class_definition superclasses: (argument_list (identifier) @name.reference.class))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @name.reference.class)))
(import_from_statement name: (dotted_name (identifier) @name.reference.module .))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @name.reference.module .)))
(type (identifier) @name.reference.type)
(decorator (identifier) @name.reference.call)
(decorator (attribute attribute: (identifier) @name.reference.call))
