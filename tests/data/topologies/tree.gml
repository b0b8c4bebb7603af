graph [
  comment "A tree: root s1 with children s2 and s3; h1 under s2, h2 under s3, h3 on s1. h3 is a host by its type attribute."
  node [ id 0 label "s1" ]
  node [ id 1 label "s2" ]
  node [ id 2 label "s3" ]
  node [ id 3 label "h1" ]
  node [ id 4 label "h2" ]
  node [ id 5 label "printer" type "host" ]
  edge [ source 0 target 1 ]
  edge [ source 0 target 2 ]
  edge [ source 1 target 3 ]
  edge [ source 2 target 4 ]
  edge [ source 0 target 5 ]
]
