; Bicep tags for hybridmap: params, vars, resources, modules, types, functions and outputs by name.
(parameter_declaration . (identifier) @name.definition.variable) @definition.variable
(variable_declaration . (identifier) @name.definition.variable) @definition.variable
(resource_declaration . (identifier) @name.definition.class) @definition.class
(module_declaration . (identifier) @name.definition.module) @definition.module
(type_declaration . (identifier) @name.definition.type) @definition.type
(user_defined_function name: (identifier) @name.definition.function) @definition.function
(output_declaration . (identifier) @name.definition.property) @definition.property

(call_expression function: (identifier) @name.reference.call)
(member_expression object: (identifier) @name.reference.call)
(member_expression property: (property_identifier) @name.reference.call)
(interpolation (identifier) @name.reference.call)
(object_property (identifier) (identifier) @name.reference.call)
; a module's params block names the params of the file it deploys
(module_declaration (object (object_property (identifier) @_p (object (object_property . (identifier) @name.reference.call))) (#eq? @_p "params")))
(module_declaration (string (string_content) @name.reference.module))
