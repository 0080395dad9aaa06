; Ada tags for hybridmap. Spec (.ads) declarations and body (.adb) bodies are both definitions.
(package_declaration name: (_) @name.definition.module) @definition.module
(package_body name: (_) @name.definition.module) @definition.module
(generic_package_declaration (package_declaration name: (_) @name.definition.module)) @definition.module
(subprogram_declaration (function_specification name: (_) @name.definition.function)) @definition.function
(subprogram_declaration (procedure_specification name: (_) @name.definition.function)) @definition.function
(subprogram_body (function_specification name: (_) @name.definition.function)) @definition.function
(subprogram_body (procedure_specification name: (_) @name.definition.function)) @definition.function
(expression_function_declaration (function_specification name: (_) @name.definition.function)) @definition.function
(full_type_declaration . (identifier) @name.definition.type) @definition.type
(private_type_declaration . (identifier) @name.definition.type) @definition.type
(task_type_declaration . (identifier) @name.definition.class) @definition.class
(protected_type_declaration . (identifier) @name.definition.class) @definition.class
(object_declaration name: (identifier) @name.definition.constant "constant") @definition.constant
(number_declaration . (identifier) @name.definition.constant) @definition.constant
(exception_declaration . (identifier) @name.definition.class) @definition.class

(function_call name: (identifier) @name.reference.call)
(function_call name: (selected_component selector_name: (identifier) @name.reference.call))
(procedure_call_statement name: (identifier) @name.reference.call)
(procedure_call_statement name: (selected_component selector_name: (identifier) @name.reference.call))
(_ subtype_mark: (identifier) @name.reference.type)
(_ subtype_mark: (selected_component selector_name: (identifier) @name.reference.type))
(with_clause (identifier) @name.reference.module)
(with_clause (selected_component selector_name: (identifier) @name.reference.module))
