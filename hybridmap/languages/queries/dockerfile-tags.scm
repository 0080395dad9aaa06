; Dockerfile tags for hybridmap: build stages (FROM ... AS name) are modules, ARG and ENV names variables.
(from_instruction as: (image_alias) @name.definition.module) @definition.module
(arg_instruction name: (_) @name.definition.variable) @definition.variable
(env_instruction (env_pair name: (_) @name.definition.variable) @definition.variable)

(from_instruction (image_spec name: (image_name) @name.reference.module))
(expansion (variable) @name.reference.call)
