; SQL tags for hybridmap: tables, views, functions, types and indexes created; tables read or
; written and functions called are references.
(create_table (object_reference name: (identifier) @name.definition.class)) @definition.class
(create_view (object_reference name: (identifier) @name.definition.class)) @definition.class
(create_materialized_view (object_reference name: (identifier) @name.definition.class)) @definition.class
(create_function (object_reference name: (identifier) @name.definition.function)) @definition.function
(create_type (object_reference name: (identifier) @name.definition.type)) @definition.type
(create_index column: (identifier) @name.definition.variable) @definition.variable
(create_table (column_definitions (column_definition name: (identifier) @name.definition.field) @definition.field))

(relation (object_reference name: (identifier) @name.reference.class))
(insert (object_reference name: (identifier) @name.reference.class))
(from (object_reference name: (identifier) @name.reference.class))
(column_definition (object_reference name: (identifier) @name.reference.class))
(create_index (object_reference name: (identifier) @name.reference.class))
(invocation (object_reference name: (identifier) @name.reference.call))
