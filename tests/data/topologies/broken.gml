graph [
  node [ id 0 label "s1"
  edge [ source 0 target 1 ]
