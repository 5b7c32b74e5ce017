module github.com/ichiban/prolog

go 1.26
