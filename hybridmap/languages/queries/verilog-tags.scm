; Verilog / SystemVerilog tags for hybridmap
(module_declaration (module_header (simple_identifier) @name.definition.module)) @definition.module
(interface_declaration (interface_ansi_header (interface_identifier (simple_identifier) @name.definition.interface))) @definition.interface
(interface_declaration (interface_nonansi_header (interface_identifier (simple_identifier) @name.definition.interface))) @definition.interface
(package_declaration (package_identifier (simple_identifier) @name.definition.namespace)) @definition.namespace
(class_declaration (class_identifier (simple_identifier) @name.definition.class)) @definition.class
(function_declaration (function_body_declaration (function_identifier (function_identifier (simple_identifier) @name.definition.function)))) @definition.function
(task_declaration (task_body_declaration (task_identifier (task_identifier (simple_identifier) @name.definition.function)))) @definition.function
(type_declaration (simple_identifier) @name.definition.type) @definition.type
(parameter_declaration (list_of_param_assignments (param_assignment (parameter_identifier (simple_identifier) @name.definition.constant)))) @definition.constant
(local_parameter_declaration (list_of_param_assignments (param_assignment (parameter_identifier (simple_identifier) @name.definition.constant)))) @definition.constant
(text_macro_definition (text_macro_name (text_macro_identifier (simple_identifier) @name.definition.macro))) @definition.macro

(module_instantiation . (simple_identifier) @name.reference.class)
(checker_instantiation (checker_identifier (simple_identifier) @name.reference.class))
(tf_call (simple_identifier) @name.reference.call)
(package_import_item (package_identifier (simple_identifier) @name.reference.module))
(simple_text_macro_usage (text_macro_identifier (simple_identifier) @name.reference.call))
(class_type (class_identifier (simple_identifier) @name.reference.type))
