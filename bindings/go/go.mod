module github.com/shardplan/shardplan/bindings/go

go 1.19
