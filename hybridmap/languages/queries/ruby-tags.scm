; Ruby tags for hybridmap.
(module name: [(constant) (scope_resolution name: (constant))] @name.definition.module) @definition.module
(class name: [(constant) (scope_resolution name: (constant))] @name.definition.class) @definition.class
(class body: (body_statement (method name: (_) @name.definition.method) @definition.method))
(module body: (body_statement (method name: (_) @name.definition.method) @definition.method))
(singleton_method name: (_) @name.definition.method) @definition.method
(program (method name: (_) @name.definition.function) @definition.function)
(body_statement (assignment left: (constant) @name.definition.constant) @definition.constant)
(program (assignment left: (constant) @name.definition.constant) @definition.constant)

(call method: (identifier) @name.reference.call)
(call receiver: (constant) @name.reference.class)
(superclass (constant) @name.reference.class)
(scope_resolution name: (constant) @name.reference.class)
(program (identifier) @name.reference.call)
