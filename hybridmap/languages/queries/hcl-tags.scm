; HCL / Terraform tags for hybridmap
; Blocks are definitions named by their last label; traversals (var.x, local.x,
; module.x, data.t.x, resource_type.x) are references.

; variable "x" {}
(block
  (identifier) @_kw
  .
  (string_lit (template_literal) @name.definition.variable)
  (#eq? @_kw "variable")) @definition.variable

; output "x" {}
(block
  (identifier) @_kw
  .
  (string_lit (template_literal) @name.definition.property)
  (#eq? @_kw "output")) @definition.property

; module "x" {}
(block
  (identifier) @_kw
  .
  (string_lit (template_literal) @name.definition.module)
  (#eq? @_kw "module")) @definition.module

; resource "type" "name" {} / data "type" "name" {}
(block
  (identifier) @_kw
  .
  (string_lit)
  .
  (string_lit (template_literal) @name.definition.type)
  (#any-of? @_kw "resource" "data")) @definition.type

; locals { name = ... }
(block
  (identifier) @_kw
  (body
    (attribute
      (identifier) @name.definition.variable) @definition.variable)
  (#eq? @_kw "locals"))

; references
; var.x / local.x
(expression
  (variable_expr (identifier) @_root)
  .
  (get_attr (identifier) @name.reference.call)
  (#any-of? @_root "var" "local")) @reference.call

; module.x.output  (module name and the output it reads)
(expression
  (variable_expr (identifier) @_root)
  .
  (get_attr (identifier) @name.reference.module)
  (#eq? @_root "module")) @reference.module

(expression
  (variable_expr (identifier) @_root)
  .
  (get_attr)
  .
  (get_attr (identifier) @name.reference.call)
  (#eq? @_root "module")) @reference.call

; data.type.name
(expression
  (variable_expr (identifier) @_root)
  .
  (get_attr)
  .
  (get_attr (identifier) @name.reference.class)
  (#eq? @_root "data")) @reference.class

; resource_type.name
(expression
  (variable_expr (identifier) @_root)
  .
  (get_attr (identifier) @name.reference.class)
  (#match? @_root "^[a-z][a-z0-9]*_[a-z0-9_]+$")) @reference.class

; module "x" { input = ... }  -> the module's input variables
(block
  (identifier) @_kw
  (body
    (attribute
      (identifier) @name.reference.call) @reference.call)
  (#eq? @_kw "module")
  (#not-match? @name.reference.call "^(source|version|providers|count|for_each|depends_on)$"))

; terraform.tfvars: name = value  -> the variable it sets
(config_file
  (body
    (attribute
      (identifier) @name.reference.call) @reference.call))
